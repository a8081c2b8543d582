"""Storage: SQLModel tables, the engine from a URL, the unit of work, migrations."""
