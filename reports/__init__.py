"""The signed memory-commitment report (issue 8): versions, workflow, PDF, signature and verification."""
