"""Tests of the context firewall (ctxgate.firewall) and its real-program runs."""
