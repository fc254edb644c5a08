"""Messages: conversion to and from numpy and every message fill (convert), message rings refilled per publish, CDR encoding, /tf publishing."""
