"""The event log as the truth for subscriptions: one tailer per process, fanned out to
bounded per-subscriber queues; replay from a cursor reads the same log."""
