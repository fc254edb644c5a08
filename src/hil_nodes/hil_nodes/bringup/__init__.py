"""Bring-up: system files, the one bring-up plan, and its launch translation."""
