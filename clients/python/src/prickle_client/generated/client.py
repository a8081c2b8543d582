from collections.abc import AsyncIterator
from typing import Any, Optional, Union

from .accept_task import AcceptTask
from .add_project_member import AddProjectMember
from .allowed_moves import AllowedMoves
from .answer import Answer
from .approve_handoff import ApproveHandoff
from .async_base_client import AsyncBaseClient
from .base_model import UNSET, UnsetType
from .cancel_task import CancelTask
from .create_schedule import CreateSchedule
from .create_token import CreateToken
from .create_webhook import CreateWebhook
from .decide_result import DecideResult
from .delete_gate_rule import DeleteGateRule
from .delete_result_rule import DeleteResultRule
from .delete_schedule import DeleteSchedule
from .delete_webhook import DeleteWebhook
from .deny_task import DenyTask
from .enable_webhook import EnableWebhook
from .enums import Decision, InboxAsk, TaskState, WaitOn
from .erase_agent import EraseAgent
from .erase_person import ErasePerson
from .event_head import EventHead
from .events_seen_after_head import EventsSeenAfterHead
from .hand_back import HandBack
from .handoff import Handoff
from .inbox import Inbox
from .inbox_projects import InboxProjects
from .input_types import (
    CapabilityInput,
    CheckpointInput,
    GateRuleInput,
    HandoffInput,
    RequestCapabilityInput,
    ResultInput,
    ResultRuleInput,
    ScheduleInput,
    VerdictInput,
    WebhookInput,
)
from .me import Me
from .node import Node
from .nodes import Nodes
from .on_task_event_batches import OnTaskEventBatches
from .on_task_events import OnTaskEvents
from .pause_schedule import PauseSchedule
from .principal import Principal
from .register_agent import RegisterAgent
from .register_remote_agent import RegisterRemoteAgent
from .remote_agents import RemoteAgents
from .remove_project_member import RemoveProjectMember
from .remove_remote_agent import RemoveRemoteAgent
from .request_capability import RequestCapability
from .reroute import Reroute
from .resume_run import ResumeRun
from .resume_schedule import ResumeSchedule
from .return_result import ReturnResult
from .revoke_token import RevokeToken
from .rotate_webhook_secret import RotateWebhookSecret
from .run_schedule_now import RunScheduleNow
from .save_checkpoint import SaveCheckpoint
from .schedules import Schedules
from .set_agent_card_public import SetAgentCardPublic
from .set_gate_rule import SetGateRule
from .set_result_rule import SetResultRule
from .start_task import StartTask
from .stop_run import StopRun
from .task import Task
from .task_events import TaskEvents
from .task_graph import TaskGraph
from .task_states import TaskStates
from .task_verbs import TaskVerbs
from .tasks import Tasks
from .tokens import Tokens
from .update_schedule import UpdateSchedule
from .wait_on import WaitOn
from .webhook_deliveries import WebhookDeliveries
from .webhooks import Webhooks


def gql(q: str) -> str:
    return q


class GeneratedClient(AsyncBaseClient):
    async def accept_task(
        self,
        task_id: str,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> AcceptTask:
        query = gql("""
            mutation AcceptTask($task_id: ID!, $expected_version: Int) {
              accept_task(task_id: $task_id, expected_version: $expected_version) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="AcceptTask", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return AcceptTask.model_validate(data)

    async def add_project_member(
        self, project: str, handle: str, **kwargs: Any
    ) -> AddProjectMember:
        query = gql("""
            mutation AddProjectMember($project: String!, $handle: String!) {
              add_project_member(project: $project, handle: $handle)
            }
            """)
        variables: dict[str, object] = {"project": project, "handle": handle}
        response = await self.execute(
            query=query,
            operation_name="AddProjectMember",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return AddProjectMember.model_validate(data)

    async def answer(
        self,
        task_id: str,
        answer: str,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Answer:
        query = gql("""
            mutation Answer($task_id: ID!, $answer: String!, $expected_version: Int) {
              answer(task_id: $task_id, answer: $answer, expected_version: $expected_version) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "answer": answer,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="Answer", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Answer.model_validate(data)

    async def approve_handoff(
        self,
        task_id: str,
        reason: Union[Optional[str], UnsetType] = UNSET,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> ApproveHandoff:
        query = gql("""
            mutation ApproveHandoff($task_id: ID!, $reason: String, $expected_version: Int) {
              approve_handoff(
                task_id: $task_id
                reason: $reason
                expected_version: $expected_version
              ) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "reason": reason,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="ApproveHandoff", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return ApproveHandoff.model_validate(data)

    async def cancel_task(
        self,
        task_id: str,
        reason: Union[Optional[str], UnsetType] = UNSET,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> CancelTask:
        query = gql("""
            mutation CancelTask($task_id: ID!, $reason: String, $expected_version: Int) {
              cancel_task(
                task_id: $task_id
                reason: $reason
                expected_version: $expected_version
              ) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "reason": reason,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="CancelTask", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return CancelTask.model_validate(data)

    async def create_schedule(
        self, input: ScheduleInput, **kwargs: Any
    ) -> CreateSchedule:
        query = gql("""
            mutation CreateSchedule($input: ScheduleInput!) {
              create_schedule(input: $input) {
                ...ScheduleFields
              }
            }

            fragment ScheduleFields on Schedule {
              id
              project
              owner
              version
              assignee
              capability {
                kind
                name
              }
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              display_title
              turn_budget
              cron
              every_seconds
              timezone
              starts_at
              ends_at
              catch_up
              paused
              next_run_at
              last_run_at
              last_task_id
              runs
              last_error
              created_at
            }
            """)
        variables: dict[str, object] = {"input": input}
        response = await self.execute(
            query=query, operation_name="CreateSchedule", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return CreateSchedule.model_validate(data)

    async def create_token(
        self,
        agent: Union[Optional[str], UnsetType] = UNSET,
        label: Union[Optional[str], UnsetType] = UNSET,
        expires_in_seconds: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> CreateToken:
        query = gql("""
            mutation CreateToken($agent: String, $label: String, $expires_in_seconds: Int) {
              create_token(
                agent: $agent
                label: $label
                expires_in_seconds: $expires_in_seconds
              ) {
                token_info {
                  id
                  principal
                  label
                  created_at
                  last_used_at
                  expires_at
                  revoked_at
                }
                token
              }
            }
            """)
        variables: dict[str, object] = {
            "agent": agent,
            "label": label,
            "expires_in_seconds": expires_in_seconds,
        }
        response = await self.execute(
            query=query, operation_name="CreateToken", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return CreateToken.model_validate(data)

    async def create_webhook(self, input: WebhookInput, **kwargs: Any) -> CreateWebhook:
        query = gql("""
            mutation CreateWebhook($input: WebhookInput!) {
              create_webhook(input: $input) {
                webhook {
                  ...WebhookFields
                }
                secret
              }
            }

            fragment WebhookFields on Webhook {
              id
              url
              project
              task_id
              assignee
              kinds
              description
              enabled
              disabled_reason
              last_cursor
              pending
              last_error
              created_at
            }
            """)
        variables: dict[str, object] = {"input": input}
        response = await self.execute(
            query=query, operation_name="CreateWebhook", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return CreateWebhook.model_validate(data)

    async def decide_result(
        self,
        task_id: str,
        decision: Decision,
        verdicts: Union[Optional[list[VerdictInput]], UnsetType] = UNSET,
        reason: Union[Optional[str], UnsetType] = UNSET,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> DecideResult:
        query = gql("""
            mutation DecideResult($task_id: ID!, $decision: Decision!, $verdicts: [VerdictInput!], $reason: String, $expected_version: Int) {
              decide_result(
                task_id: $task_id
                decision: $decision
                verdicts: $verdicts
                reason: $reason
                expected_version: $expected_version
              ) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "decision": decision,
            "verdicts": verdicts,
            "reason": reason,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="DecideResult", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return DecideResult.model_validate(data)

    async def delete_gate_rule(self, id: str, **kwargs: Any) -> DeleteGateRule:
        query = gql("""
            mutation DeleteGateRule($id: ID!) {
              delete_gate_rule(id: $id)
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = await self.execute(
            query=query, operation_name="DeleteGateRule", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return DeleteGateRule.model_validate(data)

    async def delete_result_rule(self, id: str, **kwargs: Any) -> DeleteResultRule:
        query = gql("""
            mutation DeleteResultRule($id: ID!) {
              delete_result_rule(id: $id)
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = await self.execute(
            query=query,
            operation_name="DeleteResultRule",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return DeleteResultRule.model_validate(data)

    async def delete_schedule(self, id: str, **kwargs: Any) -> DeleteSchedule:
        query = gql("""
            mutation DeleteSchedule($id: ID!) {
              delete_schedule(id: $id)
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = await self.execute(
            query=query, operation_name="DeleteSchedule", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return DeleteSchedule.model_validate(data)

    async def delete_webhook(self, id: str, **kwargs: Any) -> DeleteWebhook:
        query = gql("""
            mutation DeleteWebhook($id: ID!) {
              delete_webhook(id: $id)
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = await self.execute(
            query=query, operation_name="DeleteWebhook", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return DeleteWebhook.model_validate(data)

    async def deny_task(
        self,
        task_id: str,
        reason: Union[Optional[str], UnsetType] = UNSET,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> DenyTask:
        query = gql("""
            mutation DenyTask($task_id: ID!, $reason: String, $expected_version: Int) {
              deny_task(
                task_id: $task_id
                reason: $reason
                expected_version: $expected_version
              ) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "reason": reason,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="DenyTask", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return DenyTask.model_validate(data)

    async def enable_webhook(self, id: str, **kwargs: Any) -> EnableWebhook:
        query = gql("""
            mutation EnableWebhook($id: ID!) {
              enable_webhook(id: $id) {
                ...WebhookFields
              }
            }

            fragment WebhookFields on Webhook {
              id
              url
              project
              task_id
              assignee
              kinds
              description
              enabled
              disabled_reason
              last_cursor
              pending
              last_error
              created_at
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = await self.execute(
            query=query, operation_name="EnableWebhook", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return EnableWebhook.model_validate(data)

    async def erase_agent(self, agent_id: str, **kwargs: Any) -> EraseAgent:
        query = gql("""
            mutation EraseAgent($agent_id: String!) {
              erase_agent(agent_id: $agent_id) {
                principal
                erased_at
                tokens_revoked
                tasks_marked
              }
            }
            """)
        variables: dict[str, object] = {"agent_id": agent_id}
        response = await self.execute(
            query=query, operation_name="EraseAgent", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return EraseAgent.model_validate(data)

    async def erase_person(self, handle: str, **kwargs: Any) -> ErasePerson:
        query = gql("""
            mutation ErasePerson($handle: String!) {
              erase_person(handle: $handle) {
                principal
                erased_at
                tokens_revoked
                tasks_marked
              }
            }
            """)
        variables: dict[str, object] = {"handle": handle}
        response = await self.execute(
            query=query, operation_name="ErasePerson", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return ErasePerson.model_validate(data)

    async def hand_back(
        self,
        task_id: str,
        reason: Union[Optional[str], UnsetType] = UNSET,
        checkpoint: Union[Optional[CheckpointInput], UnsetType] = UNSET,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> HandBack:
        query = gql("""
            mutation HandBack($task_id: ID!, $reason: String, $checkpoint: CheckpointInput, $expected_version: Int) {
              hand_back(
                task_id: $task_id
                reason: $reason
                checkpoint: $checkpoint
                expected_version: $expected_version
              ) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "reason": reason,
            "checkpoint": checkpoint,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="HandBack", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return HandBack.model_validate(data)

    async def handoff(self, input: HandoffInput, **kwargs: Any) -> Handoff:
        query = gql("""
            mutation Handoff($input: HandoffInput!) {
              handoff(input: $input) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {"input": input}
        response = await self.execute(
            query=query, operation_name="Handoff", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Handoff.model_validate(data)

    async def pause_schedule(self, id: str, **kwargs: Any) -> PauseSchedule:
        query = gql("""
            mutation PauseSchedule($id: ID!) {
              pause_schedule(id: $id) {
                ...ScheduleFields
              }
            }

            fragment ScheduleFields on Schedule {
              id
              project
              owner
              version
              assignee
              capability {
                kind
                name
              }
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              display_title
              turn_budget
              cron
              every_seconds
              timezone
              starts_at
              ends_at
              catch_up
              paused
              next_run_at
              last_run_at
              last_task_id
              runs
              last_error
              created_at
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = await self.execute(
            query=query, operation_name="PauseSchedule", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return PauseSchedule.model_validate(data)

    async def register_agent(
        self,
        name: str,
        capabilities: Union[Optional[list[CapabilityInput]], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> RegisterAgent:
        query = gql("""
            mutation RegisterAgent($name: String!, $capabilities: [CapabilityInput!]) {
              register_agent(name: $name, capabilities: $capabilities) {
                agent_id
                token
              }
            }
            """)
        variables: dict[str, object] = {"name": name, "capabilities": capabilities}
        response = await self.execute(
            query=query, operation_name="RegisterAgent", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return RegisterAgent.model_validate(data)

    async def register_remote_agent(
        self,
        name: str,
        card_url: str,
        credential: Union[Optional[str], UnsetType] = UNSET,
        capabilities: Union[Optional[list[CapabilityInput]], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> RegisterRemoteAgent:
        query = gql("""
            mutation RegisterRemoteAgent($name: String!, $card_url: String!, $credential: String, $capabilities: [CapabilityInput!]) {
              register_remote_agent(
                name: $name
                card_url: $card_url
                credential: $credential
                capabilities: $capabilities
              ) {
                agent_id
                card_url
                has_credential
                created_at
              }
            }
            """)
        variables: dict[str, object] = {
            "name": name,
            "card_url": card_url,
            "credential": credential,
            "capabilities": capabilities,
        }
        response = await self.execute(
            query=query,
            operation_name="RegisterRemoteAgent",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return RegisterRemoteAgent.model_validate(data)

    async def remove_project_member(
        self, project: str, handle: str, **kwargs: Any
    ) -> RemoveProjectMember:
        query = gql("""
            mutation RemoveProjectMember($project: String!, $handle: String!) {
              remove_project_member(project: $project, handle: $handle)
            }
            """)
        variables: dict[str, object] = {"project": project, "handle": handle}
        response = await self.execute(
            query=query,
            operation_name="RemoveProjectMember",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return RemoveProjectMember.model_validate(data)

    async def remove_remote_agent(self, agent: str, **kwargs: Any) -> RemoveRemoteAgent:
        query = gql("""
            mutation RemoveRemoteAgent($agent: String!) {
              remove_remote_agent(agent: $agent)
            }
            """)
        variables: dict[str, object] = {"agent": agent}
        response = await self.execute(
            query=query,
            operation_name="RemoveRemoteAgent",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return RemoveRemoteAgent.model_validate(data)

    async def request_capability(
        self, input: RequestCapabilityInput, **kwargs: Any
    ) -> RequestCapability:
        query = gql("""
            mutation RequestCapability($input: RequestCapabilityInput!) {
              request_capability(input: $input) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {"input": input}
        response = await self.execute(
            query=query,
            operation_name="RequestCapability",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return RequestCapability.model_validate(data)

    async def reroute(
        self,
        task_id: str,
        assignee: Union[Optional[str], UnsetType] = UNSET,
        capability: Union[Optional[CapabilityInput], UnsetType] = UNSET,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Reroute:
        query = gql("""
            mutation Reroute($task_id: ID!, $assignee: String, $capability: CapabilityInput, $expected_version: Int) {
              reroute(
                task_id: $task_id
                assignee: $assignee
                capability: $capability
                expected_version: $expected_version
              ) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "assignee": assignee,
            "capability": capability,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="Reroute", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Reroute.model_validate(data)

    async def resume_run(
        self,
        task_id: str,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> ResumeRun:
        query = gql("""
            mutation ResumeRun($task_id: ID!, $expected_version: Int) {
              resume_run(task_id: $task_id, expected_version: $expected_version) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="ResumeRun", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return ResumeRun.model_validate(data)

    async def resume_schedule(self, id: str, **kwargs: Any) -> ResumeSchedule:
        query = gql("""
            mutation ResumeSchedule($id: ID!) {
              resume_schedule(id: $id) {
                ...ScheduleFields
              }
            }

            fragment ScheduleFields on Schedule {
              id
              project
              owner
              version
              assignee
              capability {
                kind
                name
              }
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              display_title
              turn_budget
              cron
              every_seconds
              timezone
              starts_at
              ends_at
              catch_up
              paused
              next_run_at
              last_run_at
              last_task_id
              runs
              last_error
              created_at
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = await self.execute(
            query=query, operation_name="ResumeSchedule", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return ResumeSchedule.model_validate(data)

    async def return_result(
        self,
        task_id: str,
        result: ResultInput,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> ReturnResult:
        query = gql("""
            mutation ReturnResult($task_id: ID!, $result: ResultInput!, $expected_version: Int) {
              return_result(
                task_id: $task_id
                result: $result
                expected_version: $expected_version
              ) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "result": result,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="ReturnResult", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return ReturnResult.model_validate(data)

    async def revoke_token(self, id: str, **kwargs: Any) -> RevokeToken:
        query = gql("""
            mutation RevokeToken($id: ID!) {
              revoke_token(id: $id) {
                id
                principal
                label
                created_at
                last_used_at
                expires_at
                revoked_at
              }
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = await self.execute(
            query=query, operation_name="RevokeToken", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return RevokeToken.model_validate(data)

    async def rotate_webhook_secret(
        self, id: str, **kwargs: Any
    ) -> RotateWebhookSecret:
        query = gql("""
            mutation RotateWebhookSecret($id: ID!) {
              rotate_webhook_secret(id: $id) {
                webhook {
                  ...WebhookFields
                }
                secret
              }
            }

            fragment WebhookFields on Webhook {
              id
              url
              project
              task_id
              assignee
              kinds
              description
              enabled
              disabled_reason
              last_cursor
              pending
              last_error
              created_at
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = await self.execute(
            query=query,
            operation_name="RotateWebhookSecret",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return RotateWebhookSecret.model_validate(data)

    async def run_schedule_now(self, id: str, **kwargs: Any) -> RunScheduleNow:
        query = gql("""
            mutation RunScheduleNow($id: ID!) {
              run_schedule_now(id: $id) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = await self.execute(
            query=query, operation_name="RunScheduleNow", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return RunScheduleNow.model_validate(data)

    async def save_checkpoint(
        self,
        task_id: str,
        checkpoint: CheckpointInput,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> SaveCheckpoint:
        query = gql("""
            mutation SaveCheckpoint($task_id: ID!, $checkpoint: CheckpointInput!, $expected_version: Int) {
              save_checkpoint(
                task_id: $task_id
                checkpoint: $checkpoint
                expected_version: $expected_version
              ) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "checkpoint": checkpoint,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="SaveCheckpoint", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return SaveCheckpoint.model_validate(data)

    async def set_agent_card_public(
        self, agent_id: str, public: bool, **kwargs: Any
    ) -> SetAgentCardPublic:
        query = gql("""
            mutation SetAgentCardPublic($agent_id: String!, $public: Boolean!) {
              set_agent_card_public(agent_id: $agent_id, public: $public)
            }
            """)
        variables: dict[str, object] = {"agent_id": agent_id, "public": public}
        response = await self.execute(
            query=query,
            operation_name="SetAgentCardPublic",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return SetAgentCardPublic.model_validate(data)

    async def set_gate_rule(self, input: GateRuleInput, **kwargs: Any) -> SetGateRule:
        query = gql("""
            mutation SetGateRule($input: GateRuleInput!) {
              set_gate_rule(input: $input) {
                id
                owner
                effect
                priority
                project
                requester_owner
                requester_agent
                deliverable_type
                capability_kind
                created_at
              }
            }
            """)
        variables: dict[str, object] = {"input": input}
        response = await self.execute(
            query=query, operation_name="SetGateRule", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return SetGateRule.model_validate(data)

    async def set_result_rule(
        self, input: ResultRuleInput, **kwargs: Any
    ) -> SetResultRule:
        query = gql("""
            mutation SetResultRule($input: ResultRuleInput!) {
              set_result_rule(input: $input) {
                id
                owner
                policy
                project
                assignee
                deliverable_type
                created_at
              }
            }
            """)
        variables: dict[str, object] = {"input": input}
        response = await self.execute(
            query=query, operation_name="SetResultRule", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return SetResultRule.model_validate(data)

    async def start_task(
        self,
        task_id: str,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> StartTask:
        query = gql("""
            mutation StartTask($task_id: ID!, $expected_version: Int) {
              start_task(task_id: $task_id, expected_version: $expected_version) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="StartTask", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return StartTask.model_validate(data)

    async def stop_run(
        self,
        task_id: str,
        reason: Union[Optional[str], UnsetType] = UNSET,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> StopRun:
        query = gql("""
            mutation StopRun($task_id: ID!, $reason: String, $expected_version: Int) {
              stop_run(
                task_id: $task_id
                reason: $reason
                expected_version: $expected_version
              ) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "reason": reason,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="StopRun", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return StopRun.model_validate(data)

    async def update_schedule(
        self, id: str, input: ScheduleInput, **kwargs: Any
    ) -> UpdateSchedule:
        query = gql("""
            mutation UpdateSchedule($id: ID!, $input: ScheduleInput!) {
              update_schedule(id: $id, input: $input) {
                ...ScheduleFields
              }
            }

            fragment ScheduleFields on Schedule {
              id
              project
              owner
              version
              assignee
              capability {
                kind
                name
              }
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              display_title
              turn_budget
              cron
              every_seconds
              timezone
              starts_at
              ends_at
              catch_up
              paused
              next_run_at
              last_run_at
              last_task_id
              runs
              last_error
              created_at
            }
            """)
        variables: dict[str, object] = {"id": id, "input": input}
        response = await self.execute(
            query=query, operation_name="UpdateSchedule", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return UpdateSchedule.model_validate(data)

    async def wait_on(
        self,
        task_id: str,
        on: WaitOn,
        question: Union[Optional[str], UnsetType] = UNSET,
        agent: Union[Optional[str], UnsetType] = UNSET,
        expected_version: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> WaitOn:
        query = gql("""
            mutation WaitOn($task_id: ID!, $on: WaitOn!, $question: String, $agent: String, $expected_version: Int) {
              wait_on(
                task_id: $task_id
                on: $on
                question: $question
                agent: $agent
                expected_version: $expected_version
              ) {
                ...TaskDetail
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "on": on,
            "question": question,
            "agent": agent,
            "expected_version": expected_version,
        }
        response = await self.execute(
            query=query, operation_name="WaitOn", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return WaitOn.model_validate(data)

    async def allowed_moves(self, **kwargs: Any) -> AllowedMoves:
        query = gql("""
            query AllowedMoves {
              allowed_moves {
                from
                to
                verbs
                actor
                note
              }
            }
            """)
        variables: dict[str, object] = {}
        response = await self.execute(
            query=query, operation_name="AllowedMoves", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return AllowedMoves.model_validate(data)

    async def event_head(self, **kwargs: Any) -> EventHead:
        query = gql("""
            query EventHead {
              event_head
            }
            """)
        variables: dict[str, object] = {}
        response = await self.execute(
            query=query, operation_name="EventHead", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return EventHead.model_validate(data)

    async def events_seen_after_head(self, **kwargs: Any) -> EventsSeenAfterHead:
        query = gql("""
            query EventsSeenAfterHead {
              event_head
              events_seen_after_head
            }
            """)
        variables: dict[str, object] = {}
        response = await self.execute(
            query=query,
            operation_name="EventsSeenAfterHead",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return EventsSeenAfterHead.model_validate(data)

    async def inbox(
        self,
        first: Union[Optional[int], UnsetType] = UNSET,
        after: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Inbox:
        query = gql("""
            query Inbox($first: Int = 50, $after: String) {
              inbox(first: $first, after: $after) {
                total_count
                page_info: pageInfo {
                  has_next_page: hasNextPage
                  end_cursor: endCursor
                }
                edges {
                  cursor
                  node {
                    ...TaskDetail
                  }
                }
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {"first": first, "after": after}
        response = await self.execute(
            query=query, operation_name="Inbox", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Inbox.model_validate(data)

    async def inbox_projects(
        self, asked: Union[Optional[InboxAsk], UnsetType] = UNSET, **kwargs: Any
    ) -> InboxProjects:
        query = gql("""
            query InboxProjects($asked: InboxAsk) {
              inbox_projects(asked: $asked) {
                project
                count
              }
            }
            """)
        variables: dict[str, object] = {"asked": asked}
        response = await self.execute(
            query=query, operation_name="InboxProjects", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return InboxProjects.model_validate(data)

    async def me(self, **kwargs: Any) -> Me:
        query = gql("""
            query Me {
              me {
                kind
                id
                owner
              }
            }
            """)
        variables: dict[str, object] = {}
        response = await self.execute(
            query=query, operation_name="Me", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Me.model_validate(data)

    async def node(self, id: str, **kwargs: Any) -> Node:
        query = gql("""
            query Node($id: ID!) {
              node(id: $id) {
                __typename
                id
                ... on Task {
                  ...TaskFields
                }
                ... on PrincipalInfo {
                  kind
                  owner
                  erased
                }
                ... on Webhook {
                  url
                  enabled
                }
                ... on Schedule {
                  project
                  paused
                  next_run_at
                }
                ... on RemoteAgent {
                  agent_id
                  card_url
                }
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = await self.execute(
            query=query, operation_name="Node", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Node.model_validate(data)

    async def nodes(self, ids: list[str], **kwargs: Any) -> Nodes:
        query = gql("""
            query Nodes($ids: [ID!]!) {
              nodes(ids: $ids) {
                __typename
                id
                ... on Task {
                  state
                  version
                }
              }
            }
            """)
        variables: dict[str, object] = {"ids": ids}
        response = await self.execute(
            query=query, operation_name="Nodes", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Nodes.model_validate(data)

    async def principal(self, id: str, **kwargs: Any) -> Principal:
        query = gql("""
            query Principal($id: String!) {
              principal(id: $id) {
                kind
                id
                owner
                capabilities {
                  kind
                  name
                }
                erased
                created_at
              }
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = await self.execute(
            query=query, operation_name="Principal", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Principal.model_validate(data)

    async def remote_agents(self, **kwargs: Any) -> RemoteAgents:
        query = gql("""
            query RemoteAgents {
              remote_agents {
                agent_id
                card_url
                has_credential
                created_at
              }
            }
            """)
        variables: dict[str, object] = {}
        response = await self.execute(
            query=query, operation_name="RemoteAgents", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return RemoteAgents.model_validate(data)

    async def schedules(
        self, project: Union[Optional[str], UnsetType] = UNSET, **kwargs: Any
    ) -> Schedules:
        query = gql("""
            query Schedules($project: String) {
              schedules(project: $project) {
                ...ScheduleFields
              }
            }

            fragment ScheduleFields on Schedule {
              id
              project
              owner
              version
              assignee
              capability {
                kind
                name
              }
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              display_title
              turn_budget
              cron
              every_seconds
              timezone
              starts_at
              ends_at
              catch_up
              paused
              next_run_at
              last_run_at
              last_task_id
              runs
              last_error
              created_at
            }
            """)
        variables: dict[str, object] = {"project": project}
        response = await self.execute(
            query=query, operation_name="Schedules", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Schedules.model_validate(data)

    async def task(self, id: str, **kwargs: Any) -> Task:
        query = gql("""
            query Task($id: ID!) {
              task(id: $id) {
                ...TaskDetail
                parent {
                  id
                  state
                }
                children {
                  id
                  state
                }
                dependencies {
                  id
                  state
                }
                checkpoints {
                  id
                  task_id
                  checkpoint {
                    progress
                    decisions
                    files_touched
                    next_steps
                    open_questions
                    needs_answer
                  }
                  sha256
                  agent
                  handed_back
                  created_at
                }
                results {
                  ...ResultFields
                }
                events {
                  ...EventFields
                }
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment EventFields on TaskEvent {
              cursor
              seq
              kind
              task_id
              project
              from_state
              to_state
              waiting_on
              verb
              actor
              at
              version
              note
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = await self.execute(
            query=query, operation_name="Task", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Task.model_validate(data)

    async def task_events(
        self,
        task_id: Union[Optional[str], UnsetType] = UNSET,
        project: Union[Optional[str], UnsetType] = UNSET,
        after: Union[Optional[str], UnsetType] = UNSET,
        first: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> TaskEvents:
        query = gql("""
            query TaskEvents($task_id: ID, $project: String, $after: String, $first: Int = 50) {
              task_events(task_id: $task_id, project: $project, after: $after, first: $first) {
                total_count
                page_info: pageInfo {
                  has_next_page: hasNextPage
                  end_cursor: endCursor
                }
                edges {
                  cursor
                  node {
                    ...EventFields
                    task {
                      id
                      state
                      version
                    }
                  }
                }
              }
            }

            fragment EventFields on TaskEvent {
              cursor
              seq
              kind
              task_id
              project
              from_state
              to_state
              waiting_on
              verb
              actor
              at
              version
              note
            }
            """)
        variables: dict[str, object] = {
            "task_id": task_id,
            "project": project,
            "after": after,
            "first": first,
        }
        response = await self.execute(
            query=query, operation_name="TaskEvents", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return TaskEvents.model_validate(data)

    async def task_graph(self, task_id: str, depth: int, **kwargs: Any) -> TaskGraph:
        query = gql("""
            query TaskGraph($task_id: ID!, $depth: Int! = 4) {
              task_graph(task_id: $task_id, depth: $depth) {
                root_id
                tasks {
                  id
                  project
                  state
                  waiting_on
                  display_title
                  assignee
                  parent_task_id
                  version
                }
                edges {
                  kind
                  from_id
                  to_id
                }
                truncated
              }
            }
            """)
        variables: dict[str, object] = {"task_id": task_id, "depth": depth}
        response = await self.execute(
            query=query, operation_name="TaskGraph", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return TaskGraph.model_validate(data)

    async def task_states(self, **kwargs: Any) -> TaskStates:
        query = gql("""
            query TaskStates {
              task_states {
                name
                description
                terminal
                moves_to
                reached_from
              }
            }
            """)
        variables: dict[str, object] = {}
        response = await self.execute(
            query=query, operation_name="TaskStates", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return TaskStates.model_validate(data)

    async def task_verbs(self, **kwargs: Any) -> TaskVerbs:
        query = gql("""
            query TaskVerbs {
              task_verbs {
                name
                description
                guide
                destructive
                ends_task
                label
                rank
                arguments {
                  name
                  type
                  required
                  description
                  options
                }
                form {
                  name
                  label
                  kind
                  required
                  options
                  placeholder
                  none
                }
                document
              }
            }
            """)
        variables: dict[str, object] = {}
        response = await self.execute(
            query=query, operation_name="TaskVerbs", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return TaskVerbs.model_validate(data)

    async def tasks(
        self,
        project: Union[Optional[str], UnsetType] = UNSET,
        state: Union[Optional[TaskState], UnsetType] = UNSET,
        assignee: Union[Optional[str], UnsetType] = UNSET,
        requester: Union[Optional[str], UnsetType] = UNSET,
        parent_task_id: Union[Optional[str], UnsetType] = UNSET,
        first: Union[Optional[int], UnsetType] = UNSET,
        after: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Tasks:
        query = gql("""
            query Tasks($project: String, $state: TaskState, $assignee: String, $requester: String, $parent_task_id: ID, $first: Int = 50, $after: String) {
              tasks(
                project: $project
                state: $state
                assignee: $assignee
                requester: $requester
                parent_task_id: $parent_task_id
                first: $first
                after: $after
              ) {
                total_count
                page_info: pageInfo {
                  has_next_page: hasNextPage
                  end_cursor: endCursor
                }
                edges {
                  cursor
                  node {
                    ...TaskDetail
                  }
                }
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskDetail on Task {
              ...TaskFields
              version
              allowed_verbs
              as_protocol
              question {
                on
                question
                asked_by
                agent
                answerers
                resumes_when_subtasks_end
              }
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "project": project,
            "state": state,
            "assignee": assignee,
            "requester": requester,
            "parent_task_id": parent_task_id,
            "first": first,
            "after": after,
        }
        response = await self.execute(
            query=query, operation_name="Tasks", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Tasks.model_validate(data)

    async def tokens(self, **kwargs: Any) -> Tokens:
        query = gql("""
            query Tokens {
              tokens {
                id
                principal
                label
                created_at
                last_used_at
                expires_at
                revoked_at
              }
            }
            """)
        variables: dict[str, object] = {}
        response = await self.execute(
            query=query, operation_name="Tokens", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Tokens.model_validate(data)

    async def webhook_deliveries(
        self,
        webhook_id: str,
        first: Union[Optional[int], UnsetType] = UNSET,
        after: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> WebhookDeliveries:
        query = gql("""
            query WebhookDeliveries($webhook_id: ID!, $first: Int, $after: String) {
              webhook_deliveries(webhook_id: $webhook_id, first: $first, after: $after) {
                id
                event_cursor
                attempt
                status_code
                error
                duration_ms
                at
              }
            }
            """)
        variables: dict[str, object] = {
            "webhook_id": webhook_id,
            "first": first,
            "after": after,
        }
        response = await self.execute(
            query=query,
            operation_name="WebhookDeliveries",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return WebhookDeliveries.model_validate(data)

    async def webhooks(self, **kwargs: Any) -> Webhooks:
        query = gql("""
            query Webhooks {
              webhooks {
                ...WebhookFields
              }
            }

            fragment WebhookFields on Webhook {
              id
              url
              project
              task_id
              assignee
              kinds
              description
              enabled
              disabled_reason
              last_cursor
              pending
              last_error
              created_at
            }
            """)
        variables: dict[str, object] = {}
        response = await self.execute(
            query=query, operation_name="Webhooks", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Webhooks.model_validate(data)

    async def on_task_event_batches(
        self,
        project: Union[Optional[str], UnsetType] = UNSET,
        task_id: Union[Optional[str], UnsetType] = UNSET,
        assignee: Union[Optional[str], UnsetType] = UNSET,
        after: Union[Optional[str], UnsetType] = UNSET,
        batch_size: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> AsyncIterator[OnTaskEventBatches]:
        query = gql("""
            subscription OnTaskEventBatches($project: String, $task_id: ID, $assignee: String, $after: String, $batch_size: Int) {
              task_event_batches(
                project: $project
                task_id: $task_id
                assignee: $assignee
                after: $after
                batch_size: $batch_size
              ) {
                ...EventFields
                task {
                  ...TaskFields
                  version
                }
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment EventFields on TaskEvent {
              cursor
              seq
              kind
              task_id
              project
              from_state
              to_state
              waiting_on
              verb
              actor
              at
              version
              note
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "project": project,
            "task_id": task_id,
            "assignee": assignee,
            "after": after,
            "batch_size": batch_size,
        }
        async for data in self.execute_ws(
            query=query,
            operation_name="OnTaskEventBatches",
            variables=variables,
            **kwargs,
        ):
            yield OnTaskEventBatches.model_validate(data)

    async def on_task_events(
        self,
        project: Union[Optional[str], UnsetType] = UNSET,
        task_id: Union[Optional[str], UnsetType] = UNSET,
        assignee: Union[Optional[str], UnsetType] = UNSET,
        after: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> AsyncIterator[OnTaskEvents]:
        query = gql("""
            subscription OnTaskEvents($project: String, $task_id: ID, $assignee: String, $after: String) {
              task_events(
                project: $project
                task_id: $task_id
                assignee: $assignee
                after: $after
              ) {
                ...EventFields
                task {
                  ...TaskFields
                  version
                }
              }
            }

            fragment ActorRefFields on ActorRef {
              __typename
              ... on PersonRef {
                kind
                handle
                erased
              }
              ... on AgentRef {
                kind
                agent_id
                erased
              }
              ... on SystemRef {
                kind
              }
            }

            fragment EventFields on TaskEvent {
              cursor
              seq
              kind
              task_id
              project
              from_state
              to_state
              waiting_on
              verb
              actor
              at
              version
              note
            }

            fragment ResultFields on Result {
              summary
              evidence {
                kind
                summary
                url
                content
                criteria
                artifact
                observed_at
                verifier
              }
              provenance
              returned_by
              returned_at
              submission_id
              revision
              artifacts {
                ref
                sha256
                commit_sha
              }
              status
              verdicts {
                criterion
                accepted
                note
              }
              verified_by {
                ...ActorRefFields
              }
              decided_by {
                ...ActorRefFields
              }
              decided_by_policy
              reason
              evidence_report {
                coverage {
                  criterion
                  evidence
                }
                general
                uncovered
                stale {
                  evidence
                  why
                }
                complete
              }
              lineage {
                cause {
                  __typename
                  ... on OwnerMessageCause {
                    kind
                    message_id
                    author
                  }
                  ... on TaskCause {
                    kind
                    task_id
                    basis
                    rule_id
                    approval_id
                  }
                  ... on NoCause {
                    kind
                  }
                  ... on OwnerScheduleCause {
                    kind
                    schedule_id
                    version
                    task_id
                    owner
                  }
                }
                context {
                  __typename
                  ... on PacketContext {
                    kind
                    task_id
                    sha256
                  }
                  ... on MemoryFactContext {
                    kind
                    key
                    sha256
                  }
                  ... on CheckpointContext {
                    kind
                    task_id
                    checkpoint_id
                    sha256
                  }
                }
                recorded_at
              }
              provenance_status
            }

            fragment TaskFields on Task {
              id
              project
              state
              waiting_on
              requester
              assignee
              packet {
                task
                deliverable_type
                acceptance_criteria
                context
                files
                depends_on
              }
              result {
                ...ResultFields
              }
              latest_checkpoint {
                progress
                decisions
                files_touched
                next_steps
                open_questions
                needs_answer
              }
              latest_checkpoint_by {
                agent
                provenance
                handed_back
              }
              parent_task_id
              created_at
              updated_at
              requested_by {
                ...ActorRefFields
              }
              origin_message_id
              route {
                via
                capability {
                  kind
                  name
                }
              }
              display_title
              turn_budget
            }
            """)
        variables: dict[str, object] = {
            "project": project,
            "task_id": task_id,
            "assignee": assignee,
            "after": after,
        }
        async for data in self.execute_ws(
            query=query, operation_name="OnTaskEvents", variables=variables, **kwargs
        ):
            yield OnTaskEvents.model_validate(data)
