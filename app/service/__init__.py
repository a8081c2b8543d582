"""The service layer: one function per verb, each one transaction.

Each verb loads the task, checks visibility, version, the move and the actor, lets the
domain make the move, stores the task, appends its events and commits; a refused call
raises before anything is written. A verb that takes structured input takes one of the
input types of app.service.inputs, which the API exposes as its GraphQL inputs.
"""

from app.service.admin import (
    add_project_member,
    delete_gate_rule,
    delete_result_rule,
    provision_token,
    register_agent,
    remove_project_member,
    set_gate_rule,
    set_result_rule,
)
from app.service.auth import authenticate
from app.service.creation import handoff, request_capability, reroute
from app.service.credentials import create_token, revoke_all, revoke_token, tokens
from app.service.erasure import erase_agent, erase_person, principal_info
from app.service.inputs import (
    ArtifactInput,
    CapabilityInput,
    CheckpointInput,
    ContextItemInput,
    EvidenceInput,
    GateRuleInput,
    HandoffInput,
    PacketInput,
    RequestCapabilityInput,
    ResultInput,
    ResultRuleInput,
    VerdictInput,
)
from app.service.results import decide_result, return_result
from app.service.run import (
    accept_task,
    answer,
    approve_handoff,
    cancel_task,
    deny_task,
    hand_back,
    resume_run,
    save_checkpoint,
    start_task,
    stop_run,
    wait_on,
)
from app.service.schedules import (
    ScheduleInput,
    create_schedule,
    delete_schedule,
    pause_schedule,
    resume_schedule,
    run_schedule_now,
    schedules_of,
    update_schedule,
)
from app.service.webhooks import (
    WebhookInput,
    create_webhook,
    delete_webhook,
    enable_webhook,
    rotate_webhook_secret,
    webhook_deliveries,
    webhooks_of,
)

__all__ = [
    "ArtifactInput",
    "CapabilityInput",
    "CheckpointInput",
    "ContextItemInput",
    "EvidenceInput",
    "GateRuleInput",
    "HandoffInput",
    "PacketInput",
    "RequestCapabilityInput",
    "ResultInput",
    "ResultRuleInput",
    "ScheduleInput",
    "VerdictInput",
    "WebhookInput",
    "accept_task",
    "add_project_member",
    "answer",
    "approve_handoff",
    "authenticate",
    "cancel_task",
    "create_schedule",
    "create_token",
    "create_webhook",
    "decide_result",
    "delete_gate_rule",
    "delete_result_rule",
    "delete_schedule",
    "delete_webhook",
    "deny_task",
    "enable_webhook",
    "erase_agent",
    "erase_person",
    "hand_back",
    "handoff",
    "pause_schedule",
    "principal_info",
    "provision_token",
    "register_agent",
    "remove_project_member",
    "request_capability",
    "reroute",
    "resume_run",
    "resume_schedule",
    "return_result",
    "revoke_all",
    "revoke_token",
    "rotate_webhook_secret",
    "run_schedule_now",
    "save_checkpoint",
    "schedules_of",
    "set_gate_rule",
    "set_result_rule",
    "start_task",
    "stop_run",
    "tokens",
    "update_schedule",
    "wait_on",
    "webhook_deliveries",
    "webhooks_of",
]
