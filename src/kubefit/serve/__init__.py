"""`kubefit serve`: the scheduling simulator in the browser, a view over the same verb functions.

`state` holds the scenario and its undo history, `views` cuts the verbs' results into the page's tables,
`security` keeps others out (token, same-origin, CSRF, CSP, body limits), `app` is the ASGI application
and `server` starts it; `assets/` is the page (plain HTML, CSS and JavaScript, no build, works offline).
"""
