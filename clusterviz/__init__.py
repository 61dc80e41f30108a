"""clusterviz: the Django app around scheduler_core."""
