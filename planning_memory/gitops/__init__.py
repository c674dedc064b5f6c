"""gitops."""
