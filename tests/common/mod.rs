pub mod jieqi_reference;
