"""Messages: conversion to and from numpy, message rings refilled per publish, CDR encoding, /tf publishing."""
