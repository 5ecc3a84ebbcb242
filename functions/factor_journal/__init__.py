"""Factor Journal: the domain core shared by the Cloud Functions and the dashboard.

Everything worth remembering about an assessment is a *factor*; every change to
a factor is a *journal entry*; each user's *assessment summary* is kept current
incrementally so "where are we?" is one document read.
"""

__version__ = "0.1.0"
