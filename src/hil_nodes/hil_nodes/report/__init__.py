"""`hil report`: a recorded run -> PNG figures + one HTML page (headless, matplotlib Agg)."""
