from typing import Optional

from .base_model import BaseModel
from .enums import CapabilityKind


class Principal(BaseModel):
    principal: Optional["PrincipalPrincipal"]


class PrincipalPrincipal(BaseModel):
    kind: str
    id: str
    owner: str
    capabilities: list["PrincipalPrincipalCapabilities"]
    erased: bool
    created_at: str


class PrincipalPrincipalCapabilities(BaseModel):
    kind: CapabilityKind
    name: str


Principal.model_rebuild()
PrincipalPrincipal.model_rebuild()
