"""Operating the server: structured logs, request ids, metrics, traces, draining on SIGTERM.

Nothing here changes what a client is answered; docs/operations.md describes it all.
"""
