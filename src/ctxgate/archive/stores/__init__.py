"""Archive store backends: the ArchiveStore protocol and its embedded implementations."""
