//! A run-time choice offers at most what its `Pick<N>` bounds: a longer `Offer` is refused.
use redmark_core::mrtr::Choice;
use redmark_core::prelude::*;

#[derive(Question)]
struct WhichDish {
    #[field(title = "Dish")]
    dish: Pick<2>,
}

struct Lunch;

#[app]
impl App for Lunch {
    /// Orders lunch.
    #[tool]
    fn order_lunch(&mut self, _: NoArgs, call: &Call, reply: Reply) -> Replied {
        let dishes = ["soup", "salad", "pasta"];
        let menu: Offer<3> = dishes.iter().map(|d| Choice { value: d, title: d }).collect();
        let (_, r) = answered!(reply.question_offering::<WhichDish>(call, &"Which?", &[], &menu)?);
        complete!(r, "ordered")
    }
}

fn main() {}
