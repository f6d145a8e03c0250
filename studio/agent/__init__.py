"""studio.agent"""
