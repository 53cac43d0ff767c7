"""The one machinery every campaign kind runs on.

- ``models.WorkStream``: the abstract row a worker claims (lease, ticket, error fields).
- ``kinds``: a kind is a declared table (units, states, stages with their queues, edges, how it
  gives up on an item, when it is finished), validated when registered; kinds are discovered
  from ``<app>/kind.py`` modules.
- ``runner``: claim, load, next action, run the stage, release, schedule the next step; one
  failure policy; one dispatch; one tick; one in-process runner.
- ``tasks``: the one Celery task module (with the older task names kept as aliases).

Import the submodules, not this package, so that loading the models stays cheap.
"""
