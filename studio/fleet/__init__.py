"""Fleets: many edge agents in one file (labels board, site, ring) and staged rollouts across them.

``fleet_file`` reads and writes WORKSPACE/fleets/NAME.yaml (``schema``: its pydantic model), ``plan`` parses
``canary:1,25%,100%`` and durations, ``gate`` judges a ring's live metrics against an SLA tier, ``probe`` sends
inference traffic during a watch window, ``rollout_state`` is the persisted record, and ``engine`` runs it
(Qt-free; listeners get :class:`studio.fleet.rollout_state.FleetEvent`). Nothing here imports torch or Qt.
"""
