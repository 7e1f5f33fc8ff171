"""The tx workload of the python-qpid-proton driver, written as proton's own transactional
example (examples/python/tx_send.py) writes it: a MessagingHandler that is also a
TransactionHandler, ``Container.declare_transaction`` on the connection, ``Transaction.send``
for each message, then ``commit()`` (or ``abort()`` with rollback=true) without waiting for the
outcomes -- the coordinator answers the discharge after them (4.4.4).

Events as the driver contract says: connected, published n, confirmed n (the delivery's outcome
as proton reports it), committed or rolled-back once the coordinator accepted the discharge, an
error when the declare or the commit failed or nothing came for ``timeout`` seconds.
"""
from __future__ import annotations

from typing import Any, Callable

from proton import Delivery, Message
from proton.handlers import MessagingHandler, TransactionHandler
from proton.reactor import Container


class TxSend(MessagingHandler, TransactionHandler):
    def __init__(self, url: str, address: str, body: str, count: int, timeout: float, heartbeat: float | None,
                 rollback: bool, emit: Callable[..., None]) -> None:
        super().__init__()
        self.url, self.address, self.body, self.count = url, address, body, count
        self.timeout, self.heartbeat, self.rollback, self.emit = timeout, heartbeat, rollback, emit
        self.conn: Any = None
        self.sender: Any = None
        self.txn: Any = None
        self.sent = 0
        self.outcomes: dict[Any, int] = {}     # delivery -> n
        self.code = 1                          # until the discharge is accepted
        self.timer: Any = None
        self.container: Any = None

    # -- the driver's own deadline: re-armed at each step, as driverlib's per-wait deadline --------
    def arm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = self.container.schedule(self.timeout, self)

    def on_timer_task(self, event: Any) -> None:
        self.emit("error", type="Timeout", message=f"no answer within {self.timeout:g} s")
        self.code = 1
        event.container.stop()

    # -- the workload ----------------------------------------------------------------------------
    def on_start(self, event: Any) -> None:
        self.container = event.container
        self.arm()
        self.conn = event.container.connect(self.url, reconnect=False, heartbeat=self.heartbeat)
        self.sender = event.container.create_sender(self.conn, self.address)
        event.container.declare_transaction(self.conn, handler=self)

    def on_connection_opened(self, event: Any) -> None:
        self.emit("connected")

    def on_transaction_declared(self, event: Any) -> None:
        self.arm()
        self.txn = event.transaction
        self.send()

    def on_sendable(self, event: Any) -> None:
        self.send()

    def send(self) -> None:
        while self.txn is not None and self.sender.credit > 0 and self.sent < self.count:
            self.sent += 1
            self.emit("published", n=self.sent)
            self.outcomes[self.txn.send(self.sender, Message(body=self.body))] = self.sent
        if self.txn is not None and self.sent == self.count:
            txn, self.txn = self.txn, None
            txn.abort() if self.rollback else txn.commit()

    def on_delivery(self, event: Any) -> None:
        n = self.outcomes.get(event.delivery)
        if n is not None and event.delivery.updated:
            self.arm()
            outcome = event.delivery.remote_state
            data = event.delivery.remote.data   # a transactional-state: [txn-id, outcome]
            accepted = outcome == Delivery.ACCEPTED or bool(data and len(data) > 1 and _is_accepted(data[1]))
            self.emit("confirmed", n=n, ack=accepted)
            del self.outcomes[event.delivery]

    def on_transaction_committed(self, event: Any) -> None:
        self.discharged("committed")

    def on_transaction_aborted(self, event: Any) -> None:
        self.discharged("rolled-back")

    def discharged(self, what: str) -> None:
        self.arm()
        self.emit(what)
        self.code = 0
        self.conn.close()

    def on_transaction_declare_failed(self, event: Any) -> None:
        self.failed("TransactionDeclareFailed", "the coordinator refused the declare")

    def on_transaction_commit_failed(self, event: Any) -> None:
        self.failed("TransactionRollback", "the coordinator did not commit the transaction")

    def failed(self, kind: str, message: str) -> None:
        self.emit("error", type=kind, message=message)
        self.code = 1
        self.conn.close()

    # -- the end ---------------------------------------------------------------------------------
    def on_connection_closed(self, event: Any) -> None:
        if self.code == 0:
            self.emit("closed", by="client")
        self.timer.cancel()

    def on_connection_error(self, event: Any) -> None:
        self.remote_error("connection", event.connection.remote_condition)

    def on_session_error(self, event: Any) -> None:
        self.remote_error("session", event.session.remote_condition)

    def on_link_error(self, event: Any) -> None:
        self.remote_error("sender", event.link.remote_condition)

    def remote_error(self, scope: str, cond: Any) -> None:
        self.emit("closed", by="server", scope=scope, condition=str(getattr(cond, "name", "") or ""),
                  text=str(getattr(cond, "description", "") or ""))
        self.emit("error", type="LinkDetached" if scope == "sender" else "ConnectionClosed",
                  message=str(getattr(cond, "description", "") or getattr(cond, "name", "") or scope))
        self.code = 1
        self.conn.close()

    def on_transport_error(self, event: Any) -> None:
        cond = event.transport.condition
        if self.code == 0 and self.sent == self.count:
            return
        self.emit("error", type="TransportError", message=str(getattr(cond, "description", "") or cond))
        self.code = 1
        event.container.stop()


def _is_accepted(outcome: Any) -> bool:
    """The outcome inside a transactional-state, as proton's codec gives it (a described list)."""
    descriptor = getattr(outcome, "descriptor", None)
    return descriptor == 0x24 or str(descriptor) == "amqp:accepted:list"


def run_tx(url: str, address: str, body: str, count: int, timeout: float, heartbeat: float | None, *,
           rollback: bool, emit: Callable[..., None]) -> int:
    handler = TxSend(url, address, body, count, timeout, heartbeat, rollback, emit)
    Container(handler).run()
    return handler.code
