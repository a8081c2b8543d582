"""Each registered agent as an A2A server at `/a2a/{owner}/{agent}` (docs/a2a.md, "Inbound").

`mount.py` is what the app mounts: it imports the SDK on the first request only, so that a
server nobody speaks A2A to never loads it. `server.py` builds the routes (the SDK's
JSON-RPC and HTTP+JSON dispatchers, the agent card); `handler.py` answers each method
through the service layer, with `call.py` (what a request acts with), `listing.py`
(ListTasks), `messages.py` (an A2A message as a handoff or an answer), `tasks.py` (a Prickle
task as an A2A task), `errors.py` (refusals as A2A errors), `streams.py` (each stream's
limits) and `push.py` (push notifications, made of webhooks).
"""
