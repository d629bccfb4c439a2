"""What the cheats of round four put into a notebook's fields and a page's names: a one-pixel
PNG (an honest figure or pasted screenshot), a payload that is live wherever it is written
unescaped or unquoted, and an SVG that runs a script when shown."""

from __future__ import annotations

import base64

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJ"
    "RU5ErkJggg=="
)  # one pixel
PAYLOAD = "1 onload=alert(1) x=\"'><script>alert(2)</script><img src=x onerror=alert(3)>"
SVG = base64.b64encode(b"<svg xmlns='http://www.w3.org/2000/svg' onload='alert(4)'/>").decode()
