"""graph stage of the SciNCL pipeline (see DESIGN.md)."""
