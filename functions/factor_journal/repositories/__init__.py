"""The Firestore boundary: the only modules of factor_journal that import google.cloud.firestore.

``client``   a counted Firestore client (every read and write counted at the RPC layer), transactions
``paths``    every document path
``people``   profiles, sessions, turns, turn claims and outcomes, rate counters
``changes``  factor changes: read → plan → write in one transaction
``journal``  reading summaries, factor states, history pages and as-of states
``locks``    the user's commit lease
"""
