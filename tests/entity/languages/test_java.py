"""Java extraction: classes, nested types, methods, constructors, imports, Javadoc."""

from __future__ import annotations

from planning_memory.entity.facts import FunctionFact
from planning_memory.entity.languages import java
from planning_memory.entity.sideeffects import classify

SOURCE = b"""/*
 * Copyright 2024 Example Corp. Licensed under the Apache License 2.0.
 */
package com.example.shop.orders;

import com.example.shop.payments.PaymentGateway;
import com.example.shop.orders.model.*;
import static java.util.Objects.requireNonNull;
import java.util.List;

/**
 * Places and cancels orders.
 */
@Service
public class OrderService {
    private static final Logger LOG = LoggerFactory.getLogger(OrderService.class);
    private final OrderRepository repository;
    private final PaymentGateway gateway;

    public OrderService(OrderRepository repository, PaymentGateway gateway) {
        this.repository = requireNonNull(repository);
        this.gateway = gateway;
    }

    /** Places an order and charges the customer. */
    public Order place(Customer customer, List<Item> items) {
        if (items.isEmpty() || customer == null) {
            throw new IllegalArgumentException("empty order");
        }
        Order order = new Order(customer, items);
        for (Item item : items) {
            order.add(item.price() > 0 ? item : Item.free(item));
        }
        gateway.charge(customer, order.total());
        repository.save(order);
        LOG.info("placed {}", order.id());
        return order;
    }

    List<Order> recent(Customer customer) {
        return repository.findByCustomer(customer);
    }

    @Entity
    public static class Audit {
        void record(String what) { System.out.println(what); }
    }
}

interface Notifier {
    void notify(Order order);
}
"""


def _fn(facts: dict, qualified: str) -> FunctionFact:  # type: ignore[type-arg]
    return next(f for f in facts["functions"] if f["qualified_name"] == qualified)


def test_java_file_facts() -> None:
    facts = java.extract(SOURCE)
    assert facts["purpose"] == "Places and cancels orders."  # the licence header is skipped
    assert [i["module"] for i in facts["imports"]] == [
        "com.example.shop.payments.PaymentGateway",
        "com.example.shop.orders.model.*",
        "java.util.Objects.requireNonNull",
        "java.util.List",
    ]
    assert facts["classes"] == ["OrderService", "OrderService.Audit", "Notifier"]
    assert facts["exports"] == ["OrderService"]
    assert facts["models"] == ["Audit"]


def test_java_methods() -> None:
    facts = java.extract(SOURCE)
    assert {(f["qualified_name"], f["kind"]) for f in facts["functions"]} == {
        ("OrderService.OrderService", "constructor"),
        ("OrderService.place", "method"),
        ("OrderService.recent", "method"),
        ("OrderService.Audit.record", "method"),
        ("Notifier.notify", "method"),  # an interface method: a declaration without a body
    }
    place = _fn(facts, "OrderService.place")
    assert place["signature"] == "(Customer customer, List<Item> items) -> Order"
    assert place["purpose"] == "Places an order and charges the customer."
    assert place["exported"] is True
    assert place["complexity"] == 5  # if, ||, for, ?:
    # a call on a typed name is recorded on its type, with its argument types
    assert (
        "OrderRepository.save(Order)" in place["calls"]
        and "new Order(Customer,List)" in place["calls"]
    )
    assert "PaymentGateway.charge(Customer,@Order.total)" in place["calls"]
    assert "repository.save" in place["written_calls"]  # side effects read these
    assert classify(place["written_calls"]) == ["database-write", "logging"]
    recent = _fn(facts, "OrderService.recent")
    assert recent["exported"] is False
    assert classify(recent["written_calls"]) == ["database-read"]
    assert classify(_fn(facts, "OrderService.Audit.record")["written_calls"]) == ["logging"]


def test_java_interface_and_abstract_methods_are_functions() -> None:
    facts = java.extract(
        b"""package com.example.shop.orders;

public interface OrderRepository extends Repository<Order, Long> {
    /** Orders of one customer, newest first. */
    List<Order> findByCustomer(Customer customer);

    default Order first(Customer customer) {
        return findByCustomer(customer).get(0);
    }

    private void hidden();
}

public abstract class Shape {
    /** The area in square metres. */
    public abstract double area();

    protected abstract String name(Locale locale);

    public String describe() { return name(Locale.ROOT) + ": " + area(); }
}
"""
    )
    find = _fn(facts, "OrderRepository.findByCustomer")
    assert find["kind"] == "method"
    assert find["signature"] == "(Customer customer) -> List<Order>"
    assert find["purpose"] == "Orders of one customer, newest first."
    assert find["exported"] is True  # interface members are public
    assert find["calls"] == [] and find["complexity"] == 1
    assert _fn(facts, "OrderRepository.hidden")["exported"] is False
    area = _fn(facts, "Shape.area")
    assert (area["kind"], area["exported"], area["lines"]) == ("method", True, [16, 16])
    assert _fn(facts, "Shape.name")["exported"] is False
    assert _fn(facts, "Shape.describe")["calls"] == ["name(_)", "area()"]
