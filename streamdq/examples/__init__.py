"""Sample files shipped with streamdq (used by ``streamdq demo``)."""
