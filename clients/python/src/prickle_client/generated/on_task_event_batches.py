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


class OnTaskEventBatches(BaseModel):
    task_event_batches: list["OnTaskEventBatchesTaskEventBatches"]


class OnTaskEventBatchesTaskEventBatches(EventFields):
    task: "OnTaskEventBatchesTaskEventBatchesTask"


class OnTaskEventBatchesTaskEventBatchesTask(TaskFields):
    version: int


OnTaskEventBatches.model_rebuild()
OnTaskEventBatchesTaskEventBatches.model_rebuild()
