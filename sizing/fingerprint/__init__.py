"""Environment fingerprints: parse the raw outputs engineers paste from customer machines (`nvidia-smi` and friends)
into facts about the GPUs, the driver and the topology. Pure Python, no Django import."""
