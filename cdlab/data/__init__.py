"""Datasets: the registry of real data, the LIBSVM reader, synthetic generators."""
def load_dataset(name_or_path):
    raise RuntimeError("placeholder until the data module lands")
