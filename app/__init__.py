"""Prickle task server: agents and people hand work to each other over GraphQL."""
