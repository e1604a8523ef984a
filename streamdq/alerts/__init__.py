"""Alerts: what an alert is, when one is sent, and what it says. One concept per module:

* ``alert``: the versioned alert document (``Alert``, schema ``streamdq.alert/v1``);
* ``candidate``: what the policy judges (a failing/passing constraint, an anomaly, the pass);
* ``policy``: the hygiene rules (``AlertPolicy``: de-duplication, floors, replay safety);
* ``throttle``: the cool-down and rate limit rule the policy and the per-sink valves share;
* ``messages``: the words and fields of each alert.

All run on the driver and are pure: no I/O. Sinks (``streamdq.connectors.sinks``)
deliver the alerts.
"""

from streamdq.alerts.alert import KINDS, SCHEMA, SCHEMA_VERSION, Alert, alert_id_for
from streamdq.alerts.policy import AlertPolicy
from streamdq.alerts.throttle import AlertThrottle, Throttle

__all__ = [
    "KINDS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "Alert",
    "AlertPolicy",
    "AlertThrottle",
    "Throttle",
    "alert_id_for",
]
