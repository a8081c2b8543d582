from .base_model import BaseModel
from .fragments import TaskDetail


class SaveCheckpoint(BaseModel):
    save_checkpoint: "SaveCheckpointSaveCheckpoint"


SaveCheckpointSaveCheckpoint = TaskDetail
SaveCheckpoint.model_rebuild()
