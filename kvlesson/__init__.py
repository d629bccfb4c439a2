"""kvlesson: what do an LLM server's settings change?"""
from kvlesson.specs import *  # noqa
from kvlesson.floor import *  # noqa
from kvlesson.chats import *  # noqa
from kvlesson.server import *  # noqa
