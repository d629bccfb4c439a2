"""What the notebooks show: numbers, sentences, tables, charts and explorers.

A module per kind for what notebooks 1 to 4 share (`numbers`, `sentences`, `tables`,
`charts`, `explorers`, with `quote` for how a number is written and `blitting` for an
explorer's fast redraw), and `<notebook>_<kind>` for what belongs to one notebook
(`real_server_numbers`, `real_server_explorer` for notebook 5; `traffic_charts`,
`traffic_explorer` for notebook 6). Every number a view shows is computed by the model.

May import: `kvlesson.arguments`, `kvlesson.memory`, `kvlesson.serving` and this wing.
Never `grading`.
"""
