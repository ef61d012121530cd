"""The reference Prefect flows of truereward (``grade_run``)."""
