"""The GraphQL API: Strawberry types, queries, mutations, the subscription, and errors."""
