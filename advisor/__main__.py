"""python -m advisor"""
from .cli import main

main()
