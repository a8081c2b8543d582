"""The service layer: one function per verb, each one transaction.

Each verb loads the task, checks visibility, version, the move and the actor, lets the
domain make the move, and saves the task with its events (`tx.tasks.save`), storage
choosing how (`Store.command`); a refused call raises before anything is written. The task
verbs are declared once in app.service.verbs; the others are functions of their modules
(admin, creation, credentials, erasure, schedules, webhooks). A verb that takes structured
input takes one of the input types of app.service.inputs, which the API exposes as its
GraphQL inputs.
"""
