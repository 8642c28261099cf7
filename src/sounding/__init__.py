"""sounding."""
