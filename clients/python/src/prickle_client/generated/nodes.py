from typing import Annotated, Literal, Optional, Union

from pydantic import Field

from .base_model import BaseModel
from .enums import TaskState


class Nodes(BaseModel):
    nodes: list[
        Optional[
            Annotated[
                Union["NodesNodesNode", "NodesNodesTask"],
                Field(discriminator="typename__"),
            ]
        ]
    ]


class NodesNodesNode(BaseModel):
    typename__: Literal[
        "Node", "PrincipalInfo", "RemoteAgent", "Schedule", "Webhook"
    ] = Field(alias="__typename")
    id: str


class NodesNodesTask(BaseModel):
    typename__: Literal["Task"] = Field(alias="__typename")
    id: str
    state: TaskState
    version: int


Nodes.model_rebuild()
