"""Spec text of the fields a delivered message carries, quoted by several basic-class guidelines.

No RFC 2119 keyword covers these sentences: the cases that check them (basic.get, basic.consume,
basic.publish) weigh them as guidelines and quote them, so the text lives in one place.
"""

REDELIVERED_DOC = ("This indicates that the message has been previously delivered to this or another client. "
                   "[domain redelivered]")
EXCHANGE_FIELD_DOC = ("Specifies the name of the exchange that the message was originally published to. "
                      "[basic.deliver / basic.get-ok / basic.return exchange]")
ROUTING_KEY_DOC = "Specifies the routing key name specified when the message was published. [routing-key]"
