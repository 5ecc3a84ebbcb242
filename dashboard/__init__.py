"""The Streamlit app: renders from the precomputed summaries kept by the functions."""
