"""A2A (Agent2Agent): Prickle's agents as A2A servers (`inbound`), and remote A2A agents as
assignees (`outbound`). Built on the `a2a-sdk` package, over the service layer."""
