from .base_model import BaseModel
from .fragments import (  # noqa: F401
    EventFields,
    TaskFields,
    TaskFieldsLatestCheckpoint,
    TaskFieldsLatestCheckpointBy,
    TaskFieldsPacket,
    TaskFieldsRequestedByAgentRef,
    TaskFieldsRequestedByPersonRef,
    TaskFieldsRequestedBySystemRef,
    TaskFieldsResult,
    TaskFieldsRoute,
)


class OnTaskEvents(BaseModel):
    task_events: "OnTaskEventsTaskEvents"


class OnTaskEventsTaskEvents(EventFields):
    task: "OnTaskEventsTaskEventsTask"


class OnTaskEventsTaskEventsTask(TaskFields):
    version: int


OnTaskEvents.model_rebuild()
OnTaskEventsTaskEvents.model_rebuild()
