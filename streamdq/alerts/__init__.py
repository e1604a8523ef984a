"""Alerts: the versioned alert schema (``alert``) and alert hygiene (``policy``).

Both run on the driver and are pure: no I/O. Sinks (``streamdq.connectors.sinks``)
deliver the alerts.
"""

from streamdq.alerts.alert import KINDS, SCHEMA, SCHEMA_VERSION, Alert, alert_id_for
from streamdq.alerts.policy import AlertPolicy

__all__ = ["KINDS", "SCHEMA", "SCHEMA_VERSION", "Alert", "AlertPolicy", "alert_id_for"]
