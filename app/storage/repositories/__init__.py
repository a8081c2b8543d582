"""The repositories of one unit of work, one per aggregate, each reached from a `Tx`:
`tx.tasks`, `tx.events`, `tx.principals`, `tx.tokens`, `tx.gate_rules`, `tx.result_rules`,
`tx.approvals`, `tx.projects`, `tx.checkpoints`, `tx.results`, `tx.schedules`,
`tx.erasures`.

Each module builds its statements once, at import: a statement built per call spends more
time making bind parameters and their cache keys than SQLite spends running it.
"""
