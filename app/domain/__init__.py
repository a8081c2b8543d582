"""The protocol core: the transition table, the move rules, the gate, the result policy.

Imports nothing outside the standard library and jsonschema: no web framework, no ORM.
"""
