"""`ryusen-conform fuzz`: property-based fuzzing of an SDK's value codec through `conform.echo`."""

from fakepeer.fuzz.campaign import CampaignResult, Failure, FuzzSetupError, run_campaign
from fakepeer.fuzz.strategies import FuzzCase, malformed_cases, portable_cases, portable_values

__all__ = [
    "CampaignResult",
    "Failure",
    "FuzzCase",
    "FuzzSetupError",
    "malformed_cases",
    "portable_cases",
    "portable_values",
    "run_campaign",
]
