"""Remote A2A agents as assignees: each task routed to one is sent to it as an A2A
`SendMessage` by a durable reader of the event log (`dispatcher.py`), which follows the
remote task (`follower.py`) and makes the Prickle moves on the agent's behalf, as the
mapping (`mapping.py`, docs/a2a.md "Outbound") says."""
