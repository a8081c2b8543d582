from typing import Annotated, Literal, Optional, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (  # noqa: F401
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


class Node(BaseModel):
    node: Optional[
        Annotated[
            Union[
                "NodeNodeNode",
                "NodeNodePrincipalInfo",
                "NodeNodeRemoteAgent",
                "NodeNodeSchedule",
                "NodeNodeTask",
                "NodeNodeWebhook",
            ],
            Field(discriminator="typename__"),
        ]
    ]


class NodeNodeNode(BaseModel):
    typename__: Literal["Node"] = Field(alias="__typename")
    id: str


class NodeNodePrincipalInfo(BaseModel):
    typename__: Literal["PrincipalInfo"] = Field(alias="__typename")
    id: str
    kind: str
    owner: str
    erased: bool


class NodeNodeRemoteAgent(BaseModel):
    typename__: Literal["RemoteAgent"] = Field(alias="__typename")
    id: str
    agent_id: str
    card_url: str


class NodeNodeSchedule(BaseModel):
    typename__: Literal["Schedule"] = Field(alias="__typename")
    id: str
    project: str
    paused: bool
    next_run_at: Optional[str]


class NodeNodeTask(TaskFields):
    typename__: Literal["Task"] = Field(alias="__typename")
    id: str


class NodeNodeWebhook(BaseModel):
    typename__: Literal["Webhook"] = Field(alias="__typename")
    id: str
    url: str
    enabled: bool


Node.model_rebuild()
