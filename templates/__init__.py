"""Proposal templates (Jinja2 + CSS), shipped in the wheel as llmsizer.templates."""
